"""The ``tag`` processor: sets one resource attribute on everything that
passes (logs, metrics and traces), for example which gateway handled it.

```yaml
processors:
  tag:
    key: gateway     # required
    value: eu-west-1 # required
```
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from sluice.collector.component import (
    ComponentConfig,
    Consumer,
    Host,
    Problem,
    Processor,
    ProcessorFactory,
    Settings,
)
from sluice.policy import Signal

RESOURCES = {
    Signal.LOG: "resource_logs",
    Signal.METRIC: "resource_metrics",
    Signal.TRACE: "resource_spans",
}


@dataclass(frozen=True)
class TagConfig(ComponentConfig):
    key: str = ""
    value: str = ""

    def validate(self) -> Iterator[Problem]:
        if not self.key:
            yield "key", "must not be empty"
        if not self.value:
            yield "value", "must not be empty"


class TagProcessor(Processor):
    mutates_data = True

    def __init__(self, config: TagConfig, signal: Signal, next_: Consumer):
        self.key = config.key
        self.value = config.value
        self.resources = RESOURCES[signal]
        self.next = next_

    async def start(self, host: Host) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    async def consume(self, data: Any) -> None:
        for container in getattr(data, self.resources):
            attributes = container.resource.attributes
            for index in reversed(range(len(attributes))):
                if attributes[index].key == self.key:
                    del attributes[index]
            attributes.add(key=self.key).value.string_value = self.value
        await self.next.consume(data)


class TagProcessorFactory(ProcessorFactory[TagConfig]):
    component_type = "tag"
    module = "sluice_example_tag.processor"
    stability: ClassVar[Mapping[str, str]] = {
        "logs": "development",
        "metrics": "development",
        "traces": "development",
    }
    config_type = TagConfig
    version = "1.0.0"

    def create(
        self, settings: Settings, config: TagConfig, signal: Signal, next_: Consumer
    ) -> Processor:
        return TagProcessor(config, signal, next_)


FACTORY = TagProcessorFactory()
