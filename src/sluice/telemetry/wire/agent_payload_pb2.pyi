from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Origin(_message.Message):
    __slots__ = ("origin_product", "origin_category", "origin_service")
    ORIGIN_PRODUCT_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_CATEGORY_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_SERVICE_FIELD_NUMBER: _ClassVar[int]
    origin_product: int
    origin_category: int
    origin_service: int
    def __init__(self, origin_product: _Optional[int] = ..., origin_category: _Optional[int] = ..., origin_service: _Optional[int] = ...) -> None: ...

class Metadata(_message.Message):
    __slots__ = ("origin",)
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    origin: Origin
    def __init__(self, origin: _Optional[_Union[Origin, _Mapping]] = ...) -> None: ...

class CommonMetadata(_message.Message):
    __slots__ = ("agent_version", "timezone", "current_epoch", "internal_ip", "public_ip", "api_key")
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    TIMEZONE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_EPOCH_FIELD_NUMBER: _ClassVar[int]
    INTERNAL_IP_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_IP_FIELD_NUMBER: _ClassVar[int]
    API_KEY_FIELD_NUMBER: _ClassVar[int]
    agent_version: str
    timezone: str
    current_epoch: float
    internal_ip: str
    public_ip: str
    api_key: str
    def __init__(self, agent_version: _Optional[str] = ..., timezone: _Optional[str] = ..., current_epoch: _Optional[float] = ..., internal_ip: _Optional[str] = ..., public_ip: _Optional[str] = ..., api_key: _Optional[str] = ...) -> None: ...

class MetricPayload(_message.Message):
    __slots__ = ("series",)
    class MetricType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNSPECIFIED: _ClassVar[MetricPayload.MetricType]
        COUNT: _ClassVar[MetricPayload.MetricType]
        RATE: _ClassVar[MetricPayload.MetricType]
        GAUGE: _ClassVar[MetricPayload.MetricType]
    UNSPECIFIED: MetricPayload.MetricType
    COUNT: MetricPayload.MetricType
    RATE: MetricPayload.MetricType
    GAUGE: MetricPayload.MetricType
    class MetricPoint(_message.Message):
        __slots__ = ("value", "timestamp")
        VALUE_FIELD_NUMBER: _ClassVar[int]
        TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
        value: float
        timestamp: int
        def __init__(self, value: _Optional[float] = ..., timestamp: _Optional[int] = ...) -> None: ...
    class Resource(_message.Message):
        __slots__ = ("type", "name")
        TYPE_FIELD_NUMBER: _ClassVar[int]
        NAME_FIELD_NUMBER: _ClassVar[int]
        type: str
        name: str
        def __init__(self, type: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...
    class MetricSeries(_message.Message):
        __slots__ = ("resources", "metric", "tags", "points", "type", "unit", "source_type_name", "interval", "metadata")
        RESOURCES_FIELD_NUMBER: _ClassVar[int]
        METRIC_FIELD_NUMBER: _ClassVar[int]
        TAGS_FIELD_NUMBER: _ClassVar[int]
        POINTS_FIELD_NUMBER: _ClassVar[int]
        TYPE_FIELD_NUMBER: _ClassVar[int]
        UNIT_FIELD_NUMBER: _ClassVar[int]
        SOURCE_TYPE_NAME_FIELD_NUMBER: _ClassVar[int]
        INTERVAL_FIELD_NUMBER: _ClassVar[int]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        resources: _containers.RepeatedCompositeFieldContainer[MetricPayload.Resource]
        metric: str
        tags: _containers.RepeatedScalarFieldContainer[str]
        points: _containers.RepeatedCompositeFieldContainer[MetricPayload.MetricPoint]
        type: MetricPayload.MetricType
        unit: str
        source_type_name: str
        interval: int
        metadata: Metadata
        def __init__(self, resources: _Optional[_Iterable[_Union[MetricPayload.Resource, _Mapping]]] = ..., metric: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ..., points: _Optional[_Iterable[_Union[MetricPayload.MetricPoint, _Mapping]]] = ..., type: _Optional[_Union[MetricPayload.MetricType, str]] = ..., unit: _Optional[str] = ..., source_type_name: _Optional[str] = ..., interval: _Optional[int] = ..., metadata: _Optional[_Union[Metadata, _Mapping]] = ...) -> None: ...
    SERIES_FIELD_NUMBER: _ClassVar[int]
    series: _containers.RepeatedCompositeFieldContainer[MetricPayload.MetricSeries]
    def __init__(self, series: _Optional[_Iterable[_Union[MetricPayload.MetricSeries, _Mapping]]] = ...) -> None: ...

class SketchPayload(_message.Message):
    __slots__ = ("sketches", "metadata")
    class Sketch(_message.Message):
        __slots__ = ("metric", "host", "distributions", "tags", "dogsketches", "metadata")
        class Distribution(_message.Message):
            __slots__ = ("ts", "cnt", "min", "max", "avg", "sum", "v", "g", "delta", "buf")
            TS_FIELD_NUMBER: _ClassVar[int]
            CNT_FIELD_NUMBER: _ClassVar[int]
            MIN_FIELD_NUMBER: _ClassVar[int]
            MAX_FIELD_NUMBER: _ClassVar[int]
            AVG_FIELD_NUMBER: _ClassVar[int]
            SUM_FIELD_NUMBER: _ClassVar[int]
            V_FIELD_NUMBER: _ClassVar[int]
            G_FIELD_NUMBER: _ClassVar[int]
            DELTA_FIELD_NUMBER: _ClassVar[int]
            BUF_FIELD_NUMBER: _ClassVar[int]
            ts: int
            cnt: int
            min: float
            max: float
            avg: float
            sum: float
            v: _containers.RepeatedScalarFieldContainer[float]
            g: _containers.RepeatedScalarFieldContainer[int]
            delta: _containers.RepeatedScalarFieldContainer[int]
            buf: _containers.RepeatedScalarFieldContainer[float]
            def __init__(self, ts: _Optional[int] = ..., cnt: _Optional[int] = ..., min: _Optional[float] = ..., max: _Optional[float] = ..., avg: _Optional[float] = ..., sum: _Optional[float] = ..., v: _Optional[_Iterable[float]] = ..., g: _Optional[_Iterable[int]] = ..., delta: _Optional[_Iterable[int]] = ..., buf: _Optional[_Iterable[float]] = ...) -> None: ...
        class Dogsketch(_message.Message):
            __slots__ = ("ts", "cnt", "min", "max", "avg", "sum", "k", "n")
            TS_FIELD_NUMBER: _ClassVar[int]
            CNT_FIELD_NUMBER: _ClassVar[int]
            MIN_FIELD_NUMBER: _ClassVar[int]
            MAX_FIELD_NUMBER: _ClassVar[int]
            AVG_FIELD_NUMBER: _ClassVar[int]
            SUM_FIELD_NUMBER: _ClassVar[int]
            K_FIELD_NUMBER: _ClassVar[int]
            N_FIELD_NUMBER: _ClassVar[int]
            ts: int
            cnt: int
            min: float
            max: float
            avg: float
            sum: float
            k: _containers.RepeatedScalarFieldContainer[int]
            n: _containers.RepeatedScalarFieldContainer[int]
            def __init__(self, ts: _Optional[int] = ..., cnt: _Optional[int] = ..., min: _Optional[float] = ..., max: _Optional[float] = ..., avg: _Optional[float] = ..., sum: _Optional[float] = ..., k: _Optional[_Iterable[int]] = ..., n: _Optional[_Iterable[int]] = ...) -> None: ...
        METRIC_FIELD_NUMBER: _ClassVar[int]
        HOST_FIELD_NUMBER: _ClassVar[int]
        DISTRIBUTIONS_FIELD_NUMBER: _ClassVar[int]
        TAGS_FIELD_NUMBER: _ClassVar[int]
        DOGSKETCHES_FIELD_NUMBER: _ClassVar[int]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        metric: str
        host: str
        distributions: _containers.RepeatedCompositeFieldContainer[SketchPayload.Sketch.Distribution]
        tags: _containers.RepeatedScalarFieldContainer[str]
        dogsketches: _containers.RepeatedCompositeFieldContainer[SketchPayload.Sketch.Dogsketch]
        metadata: Metadata
        def __init__(self, metric: _Optional[str] = ..., host: _Optional[str] = ..., distributions: _Optional[_Iterable[_Union[SketchPayload.Sketch.Distribution, _Mapping]]] = ..., tags: _Optional[_Iterable[str]] = ..., dogsketches: _Optional[_Iterable[_Union[SketchPayload.Sketch.Dogsketch, _Mapping]]] = ..., metadata: _Optional[_Union[Metadata, _Mapping]] = ...) -> None: ...
    SKETCHES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    sketches: _containers.RepeatedCompositeFieldContainer[SketchPayload.Sketch]
    metadata: CommonMetadata
    def __init__(self, sketches: _Optional[_Iterable[_Union[SketchPayload.Sketch, _Mapping]]] = ..., metadata: _Optional[_Union[CommonMetadata, _Mapping]] = ...) -> None: ...
