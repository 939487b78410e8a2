"""Pure HTTP decisions: conditional and range requests, the public origin."""
