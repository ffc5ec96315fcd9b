"""One script per experiment; each prints a markdown table (and can refresh the README's copy)."""
