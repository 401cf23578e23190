"""azync's command groups, one module per noun; ``SYSTEM.commands`` names them."""
