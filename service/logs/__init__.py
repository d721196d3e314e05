"""Log lines an operator can search: one JSON object a line (or key=value text on a terminal), one line
per request carrying the fields every layer noted.

    ObserveMiddleware ─► begin(RequestContext(id)) ─► endpoints, step, gateway, tools note(...) ─►
    one log line with every noted field when the request ends; error bodies and log records made
    meanwhile carry the id

The request's context (context.py), how a line reads (lines.py), and where lines go: the handler that
writes a loop turn's lines in one write, configuring it, and the request line's short path (writing.py).
Secrets never reach a line: the record's text is scrubbed when it is made
(redaction.install_log_scrubber), and the formatter scrubs the fields' text too.
"""
