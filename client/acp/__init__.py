"""`reactstep acp`, the Agent Client Protocol agent an editor starts: the agent and its sessions
(agent.py, session.py, turn.py), what the editor is shown (turn_view.py, tool_view.py, diff_text.py),
the person's word on a write (permissions.py), the editor's buffers and terminals (editor_files.py,
terminal.py) and a recorded session shown again (session_load.py); the command is cli/acp_command.py."""
