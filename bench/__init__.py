"""The benchmark harness behind ``tmpl2py bench``: ``seeds`` times the seed templates against
hand-written renderers, transformers, minijinja and the Go reference."""
