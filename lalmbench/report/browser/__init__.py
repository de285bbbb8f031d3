"""Static results browser: filter items by task/model/condition, listen, read raw outputs and parses."""
