"""The student's loop: set-up, building the exercises, running the checks, the records and screens."""
