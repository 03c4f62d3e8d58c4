"""Moodle's formats: Moodle XML and GIFT, and what they share (Moodle's multilang form, item texts as Moodle stores them)."""
