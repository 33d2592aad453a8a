"""``reliora serve``: the local read-only web view (app.py), its pages (pages.py), templates."""
