"""What several collector components share, as upstream's ``internal/coreinternal``
and ``internal/filter`` packages: pdata values written as Go writes them
(:mod:`.go_text`), attribute actions (:mod:`.attraction`) and the legacy
include/exclude matching (:mod:`.filtermatch`). Components import these;
these never import a component."""
