"""``omnijudge serve``: the Gemini and OpenAI judge APIs the public evaluators call, answered by
omnijudge judges with dynamic batching (``docs/serve.md``)."""
