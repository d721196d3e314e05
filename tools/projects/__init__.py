"""Projects as living, versioned things: the head, the change journal, and a store that journals."""
