"""Text the harness stores and compares: Unicode hygiene and sentence splitting, for English and Chinese."""
