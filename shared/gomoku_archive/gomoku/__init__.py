"""Freestyle Gomoku itself: the vocabulary of a recorded game and the replay engine."""
