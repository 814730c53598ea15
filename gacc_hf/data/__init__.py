"""Stage 1, the dataset: the schema and its validation, loading any source, the bundled sample, generated data,
the `datasets` builder, the dataset card and the content fingerprint."""
