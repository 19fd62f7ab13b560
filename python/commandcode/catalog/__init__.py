"""Services: finding sessions — directory scans, listings and reference resolution."""
