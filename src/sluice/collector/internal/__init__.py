"""What several collector components share, as upstream's ``internal/coreinternal``
and ``internal/filter`` packages: pdata values written as Go writes them
(:mod:`.go_text`), an item's attributes as pdata's ``Map`` (:mod:`.attrmap`),
attribute actions (:mod:`.attraction`) and the legacy include/exclude
matching (:mod:`.filtermatch`), and the warning upstream's ``config/internal``
logs for a server on every interface (:mod:`.warning`). Components import these;
these never import a component."""
