"""The month archive: the profile, building and naming a month's file, and the export."""
