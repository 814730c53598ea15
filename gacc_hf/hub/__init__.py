"""Stage 8, the Hub: model cards, the upload plan and the one networked commit."""
