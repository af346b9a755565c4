"""The hub's HTTP layer: route table, middleware, OpenAPI, application factory."""
