"""What a person or a program reads of the verdicts: analyze's formats (table, wide, json, words), why --explain,
and the ticket report (html, markdown). One file per format; each is registered in analyzer/output.py.
Formats never compute."""
