"""What grading hands to other systems: JUnit for an LMS, the class's grades as CSV."""
