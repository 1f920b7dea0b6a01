"""The book's take-away editions, made from the built site (``_build/html``).

:mod:`tools.editions.print_page` assembles one print page (HTML) from the site's article
bodies; :mod:`tools.editions.pdf` prints it with Chromium into the whole-book PDF
(``make pdf``) and the per-chapter PDFs (``make pdf-chapters``).
"""
