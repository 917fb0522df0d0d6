"""The official `openai` Python client against `agentworld serve` on loopback.

Starts nothing itself. It reads:
- AGENTWORLD_BASE_URL: a server on the demo model (plain, streaming, completions, errors);
- AGENTWORLD_SCRIPTED_URL: a server whose replies are scripted (reasoning plus an XML tool
  call to `click` with element_id 7, cut mid-tag across tokens), for the tool-call tests.

Run by crates/cli/tests/openai_client.rs, which starts both servers; by hand:
    AGENTWORLD_BASE_URL=http://127.0.0.1:8000 python3 tests/openai_client/test_openai_client.py
Exits 0 with a SKIP line when the openai package is missing.
"""

import json
import os
import sys
import unittest

try:
    import openai
except ImportError:
    print("SKIP: the openai package is not installed (python3 -m pip install openai)")
    sys.exit(0)

BASE = os.environ.get("AGENTWORLD_BASE_URL")
SCRIPTED = os.environ.get("AGENTWORLD_SCRIPTED_URL")

TOOLS = [{
    "type": "function",
    "function": {
        "name": "click",
        "description": "Click an element of the screen.",
        "parameters": {"type": "object", "properties": {"element_id": {"type": "integer"}},
                       "required": ["element_id"]},
    },
}]


def client(url):
    return openai.OpenAI(base_url=url.rstrip("/") + "/v1", api_key="not-needed",
                         max_retries=0, timeout=120)


def reasoning_of(obj):
    """vLLM-style extra field, kept by the client's pydantic models."""
    return getattr(obj, "reasoning_content", None)


def collect(stream):
    """Accumulates a chat stream: reasoning, content, tool calls by index, finish, usage."""
    reasoning, content, calls, finish, usage = "", "", {}, None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            reasoning += reasoning_of(delta) or ""
            content += delta.content or ""
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                entry["id"] = entry["id"] or call.id
                if call.function is not None:
                    entry["name"] += call.function.name or ""
                    entry["arguments"] += call.function.arguments or ""
            if choice.finish_reason is not None:
                finish = choice.finish_reason
    return reasoning, content, [calls[i] for i in sorted(calls)], finish, usage


@unittest.skipUnless(BASE, "AGENTWORLD_BASE_URL is not set")
class DemoModel(unittest.TestCase):
    def setUp(self):
        self.c = client(BASE)
        self.model = self.c.models.list().data[0].id

    def chat(self, **kw):
        args = dict(model=self.model, messages=[{"role": "user", "content": "ls -la"}],
                    max_tokens=30, temperature=0)
        args.update(kw)
        return self.c.chat.completions.create(**args)

    def test_models_lists_the_served_model(self):
        models = self.c.models.list().data
        self.assertEqual(len(models), 1)
        self.assertTrue(models[0].id)

    def test_plain_chat(self):
        r = self.chat()
        self.assertTrue(r.id.startswith("chatcmpl-"))
        choice = r.choices[0]
        self.assertIn(choice.finish_reason, ("stop", "length"))
        self.assertEqual(choice.message.role, "assistant")
        self.assertTrue(choice.message.content or reasoning_of(choice.message))
        self.assertGreaterEqual(r.usage.completion_tokens, 1)
        self.assertLessEqual(r.usage.completion_tokens, 30)

    def test_streaming_equals_plain(self):
        plain = self.chat().choices[0]
        stream = self.chat(stream=True, stream_options={"include_usage": True})
        reasoning, content, calls, finish, usage = collect(stream)
        self.assertEqual(reasoning.strip(), (reasoning_of(plain.message) or "").strip())
        self.assertEqual(content.strip(), (plain.message.content or "").strip())
        self.assertEqual(calls, [])
        self.assertEqual(finish, plain.finish_reason)
        self.assertIsNotNone(usage)

    def test_system_and_multi_turn(self):
        r = self.chat(messages=[
            {"role": "system", "content": "You are a Terminal World Model."},
            {"role": "user", "content": "ls"},
            {"role": "assistant", "content": "a.txt"},
            {"role": "user", "content": "cat a.txt"},
        ], max_tokens=10, seed=1, temperature=0.7, top_p=0.9, stop=["\n\n\n"])
        self.assertIn(r.choices[0].finish_reason, ("stop", "length"))

    def test_text_completion(self):
        r = self.c.completions.create(model=self.model, prompt="<|im_start|>user\nls<|im_end|>\n",
                                      max_tokens=5, temperature=0)
        self.assertIn(r.choices[0].finish_reason, ("stop", "length"))
        self.assertIsInstance(r.choices[0].text, str)

    def test_errors_name_the_field(self):
        with self.assertRaises(openai.NotFoundError) as e:
            self.chat(model="no-such-model")
        self.assertEqual(e.exception.body["param"], "model")
        with self.assertRaises(openai.BadRequestError) as e:
            self.chat(max_tokens=0)
        self.assertEqual(e.exception.body["param"], "max_tokens")
        with self.assertRaises(openai.BadRequestError) as e:
            self.chat(messages=[])
        self.assertEqual(e.exception.body["param"], "messages")
        with self.assertRaises(openai.BadRequestError) as e:
            self.chat(messages=[{"role": "wizard", "content": "x"}])
        self.assertEqual(e.exception.body["param"], "messages[0].role")


@unittest.skipUnless(SCRIPTED, "AGENTWORLD_SCRIPTED_URL is not set")
class ToolCalls(unittest.TestCase):
    def setUp(self):
        self.c = client(SCRIPTED)
        self.model = self.c.models.list().data[0].id
        self.messages = [{"role": "user", "content": "Click the search box."}]

    def test_tool_call_and_reasoning(self):
        r = self.c.chat.completions.create(model=self.model, messages=self.messages, tools=TOOLS)
        choice = r.choices[0]
        self.assertEqual(choice.finish_reason, "tool_calls")
        self.assertEqual(reasoning_of(choice.message), "I should click it.")
        self.assertEqual(choice.message.content, "Clicking now.")
        [call] = choice.message.tool_calls
        self.assertEqual(call.type, "function")
        self.assertEqual(call.function.name, "click")
        self.assertEqual(json.loads(call.function.arguments), {"element_id": 7})

    def test_streamed_tool_call(self):
        stream = self.c.chat.completions.create(model=self.model, messages=self.messages,
                                                tools=TOOLS, stream=True)
        reasoning, content, calls, finish, _ = collect(stream)
        self.assertEqual(reasoning.strip(), "I should click it.")
        self.assertEqual(content.strip(), "Clicking now.")
        self.assertEqual(finish, "tool_calls")
        self.assertEqual(len(calls), 1)
        self.assertTrue(calls[0]["id"].startswith("call_"))
        self.assertEqual(calls[0]["name"], "click")
        self.assertEqual(json.loads(calls[0]["arguments"]), {"element_id": 7})

    def test_tool_result_round_trip(self):
        first = self.c.chat.completions.create(model=self.model, messages=self.messages,
                                               tools=TOOLS).choices[0].message
        call = first.tool_calls[0]
        history = self.messages + [
            {"role": "assistant", "content": first.content,
             "tool_calls": [{"id": call.id, "type": "function",
                             "function": {"name": call.function.name,
                                          "arguments": call.function.arguments}}]},
            {"role": "tool", "tool_call_id": call.id, "content": "clicked"},
        ]
        r = self.c.chat.completions.create(model=self.model, messages=history, tools=TOOLS)
        self.assertEqual(r.choices[0].finish_reason, "tool_calls")


if __name__ == "__main__":
    if not BASE and not SCRIPTED:
        print("SKIP: set AGENTWORLD_BASE_URL and/or AGENTWORLD_SCRIPTED_URL to a running server")
        sys.exit(0)
    unittest.main(verbosity=2)
