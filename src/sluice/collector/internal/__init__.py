"""What several collector components share, as upstream's ``internal/coreinternal``
and ``internal/filter`` packages: pdata values written as Go writes them
(:mod:`.go_text`), an item's attributes as pdata's ``Map`` (:mod:`.attrmap`),
attribute actions (:mod:`.attraction`) and the legacy include/exclude
matching (:mod:`.filtermatch`). Components import these;
these never import a component."""
