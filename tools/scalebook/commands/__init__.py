"""One module per ./workbook command; tools/workbook.py's table says which."""
