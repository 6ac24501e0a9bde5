"""The installer: engram's entries in host configs (link, unlink, upgrade, doctor).

`formats` holds the pure merge/strip per config format, `jsonc` the comment-keeping JSON
edits, `filedance` the one safe way to change a file, `command` the hook command and the
marker that recognises our entries, `plan` the glue from host definitions to changes.
"""
