from dpassess.cli import main

main()
