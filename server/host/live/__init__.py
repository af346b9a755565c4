"""Live view: a tab's frames to its viewers, and a holder's input back to the tab."""
