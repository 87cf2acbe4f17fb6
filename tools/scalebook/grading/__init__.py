"""The instructor's grading: kit, intake, CTest tree, steps, reports, exports and pages.

The instructor's grading: a kit built from this tree, submissions taken in, a CTest tree of
(submission, check) tests run in boxes, and the reports, exports and pages made from its results.

DIR/CTestTestfile.cmake             subdirs("ctest")
DIR/ctest/CTestTestfile.cmake       subdirs() of every submission
DIR/ctest/kit/                      this tree's trusted half, copied once per run (grading/kit.py)
DIR/ctest/objects/                  compiled exercise files by content (identical files compile once)
DIR/ctest/students/NAME/            one submission: CTestTestfile.cmake, src/, build/, runs/, results/,
                                    record.json and feedback.html (the instructor's: every check)
DIR/students/NAME/                  what its student may be given: report.json, junit.xml, feedback.html
"""
