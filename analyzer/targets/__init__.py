"""What gets a word: waiting pods, attempts (manifests judged against the bundle) and refused owners."""
