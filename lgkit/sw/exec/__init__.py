"""Running a program: the code-generating interpreter, the pipeline, the v1model architecture."""
