"""What a loaded machine may add to a deadline that a test asserts.

A test that asserts a deadline checks that a call ends at its bound instead of hanging (a stalled
socket, a backtracking regex, a sleeping child, a lease an hour from expiry). The path without the
bound takes far longer than bound + LOAD_SLACK_S, so the slack costs the test nothing, and it holds
where CI runs beside other work: load 4 on 2 cores, each process given about half a core.
"""

LOAD_SLACK_S = 4.0
