"""Full-screen Textual screens (tree navigator, rewind menu, resume picker). A front end: Textual
is imported only here, and only when a screen opens. `app.py` runs one screen; each screen is a
module in `screens/` with its `.tcss` beside it; shared widgets live in `widgets/`."""
