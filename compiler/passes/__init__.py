"""The IR -> IR passes. ``pipeline`` runs them: scope resolution (``scope``) first, then every
optimising pass in the order ``pipeline.PASSES`` lists, one module per pass, each module's
docstring stating the fact the pass rests on and its guard; ``util`` holds their shared helpers.
Every pass keeps the rendered output byte-identical."""
