"""`python -m commandcode`."""

from .cli import main

main()
