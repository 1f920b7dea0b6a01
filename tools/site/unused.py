"""Files the site ships but no page uses: source maps and TrueType fonts beside their web fonts."""

from __future__ import annotations

from .pipeline import Site


def remove_unused_files(site: Site) -> None:
    """Final step: every ``*.map`` of the site and every ``*.ttf`` of ``_static`` goes."""
    for path in [*site.outdir.rglob("*.map"), *site.static.rglob("*.ttf")]:
        path.unlink()
