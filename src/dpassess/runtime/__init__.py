"""How work is done, apart from what it is: worker processes, atomic file writes, the content-hash cache."""
