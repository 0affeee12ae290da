"""Records -> text: trace and picture records, rich tables, the terminal graph drawing,
DOT/Mermaid and the catalogue. Views never run a sweep; they are handed its results."""
