// Original file: cri/v1/api.proto

import type { WindowsContainerResources as _runtime_v1_WindowsContainerResources, WindowsContainerResources__Output as _runtime_v1_WindowsContainerResources__Output } from '../../runtime/v1/WindowsContainerResources.js';
import type { WindowsContainerSecurityContext as _runtime_v1_WindowsContainerSecurityContext, WindowsContainerSecurityContext__Output as _runtime_v1_WindowsContainerSecurityContext__Output } from '../../runtime/v1/WindowsContainerSecurityContext.js';

export interface WindowsContainerConfig {
  'resources'?: (_runtime_v1_WindowsContainerResources | null);
  'securityContext'?: (_runtime_v1_WindowsContainerSecurityContext | null);
}

export interface WindowsContainerConfig__Output {
  'resources': (_runtime_v1_WindowsContainerResources__Output | null);
  'securityContext': (_runtime_v1_WindowsContainerSecurityContext__Output | null);
}
