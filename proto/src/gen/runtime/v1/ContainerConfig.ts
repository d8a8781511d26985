// Original file: cri/v1/api.proto

import type { ContainerMetadata as _runtime_v1_ContainerMetadata, ContainerMetadata__Output as _runtime_v1_ContainerMetadata__Output } from '../../runtime/v1/ContainerMetadata.js';
import type { ImageSpec as _runtime_v1_ImageSpec, ImageSpec__Output as _runtime_v1_ImageSpec__Output } from '../../runtime/v1/ImageSpec.js';
import type { KeyValue as _runtime_v1_KeyValue, KeyValue__Output as _runtime_v1_KeyValue__Output } from '../../runtime/v1/KeyValue.js';
import type { Mount as _runtime_v1_Mount, Mount__Output as _runtime_v1_Mount__Output } from '../../runtime/v1/Mount.js';
import type { Device as _runtime_v1_Device, Device__Output as _runtime_v1_Device__Output } from '../../runtime/v1/Device.js';
import type { LinuxContainerConfig as _runtime_v1_LinuxContainerConfig, LinuxContainerConfig__Output as _runtime_v1_LinuxContainerConfig__Output } from '../../runtime/v1/LinuxContainerConfig.js';
import type { WindowsContainerConfig as _runtime_v1_WindowsContainerConfig, WindowsContainerConfig__Output as _runtime_v1_WindowsContainerConfig__Output } from '../../runtime/v1/WindowsContainerConfig.js';
import type { CDIDevice as _runtime_v1_CDIDevice, CDIDevice__Output as _runtime_v1_CDIDevice__Output } from '../../runtime/v1/CDIDevice.js';

export interface ContainerConfig {
  'metadata'?: (_runtime_v1_ContainerMetadata | null);
  'image'?: (_runtime_v1_ImageSpec | null);
  'command'?: (string)[];
  'args'?: (string)[];
  'workingDir'?: (string);
  'envs'?: (_runtime_v1_KeyValue)[];
  'mounts'?: (_runtime_v1_Mount)[];
  'devices'?: (_runtime_v1_Device)[];
  'labels'?: ({[key: string]: string});
  'annotations'?: ({[key: string]: string});
  'logPath'?: (string);
  'stdin'?: (boolean);
  'stdinOnce'?: (boolean);
  'tty'?: (boolean);
  'linux'?: (_runtime_v1_LinuxContainerConfig | null);
  'windows'?: (_runtime_v1_WindowsContainerConfig | null);
  'CDIDevices'?: (_runtime_v1_CDIDevice)[];
}

export interface ContainerConfig__Output {
  'metadata': (_runtime_v1_ContainerMetadata__Output | null);
  'image': (_runtime_v1_ImageSpec__Output | null);
  'command': (string)[];
  'args': (string)[];
  'workingDir': (string);
  'envs': (_runtime_v1_KeyValue__Output)[];
  'mounts': (_runtime_v1_Mount__Output)[];
  'devices': (_runtime_v1_Device__Output)[];
  'labels': ({[key: string]: string});
  'annotations': ({[key: string]: string});
  'logPath': (string);
  'stdin': (boolean);
  'stdinOnce': (boolean);
  'tty': (boolean);
  'linux': (_runtime_v1_LinuxContainerConfig__Output | null);
  'windows': (_runtime_v1_WindowsContainerConfig__Output | null);
  'CDIDevices': (_runtime_v1_CDIDevice__Output)[];
}
