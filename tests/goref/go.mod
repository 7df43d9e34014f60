module goref

go 1.27
