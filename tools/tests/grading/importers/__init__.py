"""Replays of the LMS importers' own rules (Canvas's in Ruby, Moodle's in PHP, PrairieLearn's in Python), run by test_importers.py."""
