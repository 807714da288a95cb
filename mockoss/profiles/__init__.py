"""Server profiles: each maps parser traces to one server's API output, quirks included."""
