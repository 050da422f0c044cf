// Metadata-only lists in protobuf on the current control plane (the scenarios: protobuf-list-scenarios.ts).
import { protobufListScenarios } from './protobuf-list-scenarios.ts';

protobufListScenarios({ suite: 'protobuf-list' });
