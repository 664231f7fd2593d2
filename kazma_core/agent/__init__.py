"""The agent: a LangGraph supervisor graph, its tools, its models, and the turn runner."""
