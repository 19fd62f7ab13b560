"""One module per full-screen screen; each one's styles are in a `.tcss` file of the same name."""
