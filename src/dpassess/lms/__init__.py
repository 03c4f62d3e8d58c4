"""What the target LMSs accept, reject or alter: facts lint and the exporters share (Moodle's grade
list and name rules, Canvas's limits), each taken from the LMS's own code."""
