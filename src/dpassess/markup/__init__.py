"""Text in items: Markdown -> HTML, HTML -> the XHTML subset QTI allows, characters XML cannot hold, media in texts."""
