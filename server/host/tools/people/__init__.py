"""Tools that reach the people of a team: questions."""
