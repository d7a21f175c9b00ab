"""2020 Census privacy-loss allocations in exactdp's own format (data package)."""
