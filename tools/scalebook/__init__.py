"""scalebook's command line and its machinery: chapters, set-up, builds, running checks, hints."""
