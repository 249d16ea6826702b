#include "suite.hpp"

namespace convgrad::tool {

const std::vector<suite_layer> &default_suite() {
    static const std::vector<suite_layer> suite = {
        // name                      deconv  descriptor                                   source
        {"resnet50_conv1_7x7s2", false, "mb8ic3ih224oc64oh112kh7sh2ph3", "ResNet-50 stem, 224x224"},
        {"resnet50_res2_3x3", false, "mb8ic64ih56oc64oh56kh3ph1", "ResNet-50 res2 bottleneck 3x3"},
        {"resnet50_res2_1x1", false, "mb16ic64ih56oc256oh56kh1", "ResNet-50 res2 1x1 expansion"},
        {"resnet50_res3_3x3s2", false, "mb8ic128ih56oc128oh28kh3sh2ph1", "ResNet-50 res3 strided 3x3 (v1.5)"},
        {"resnet50_res3_proj_1x1s2", false, "mb8ic256ih56oc512oh28kh1sh2", "ResNet-50 res3 projection shortcut"},
        {"resnet50_res4_3x3", false, "mb8ic256ih14oc256oh14kh3ph1", "ResNet-50 res4 bottleneck 3x3"},
        {"resnext50_res3_g32_3x3", false, "g32mb16ic256ih28oc256oh28kh3ph1", "ResNeXt-50 32x4d grouped 3x3"},
        {"mobilenetv2_dw_3x3", false, "g144mb32ic144ih56oc144oh56kh3ph1", "MobileNetV2 depthwise 3x3"},
        {"mobilenetv2_dw_3x3s2", false, "g96mb32ic96ih112oc96oh56kh3sh2ph1", "MobileNetV2 depthwise 3x3 stride 2"},
        {"deeplabv3_aspp_3x3_d6", false, "mb1ic256ih33oc256oh33kh3ph6dh5", "DeepLabv3 ASPP dilated 3x3, rate 6"},
        {"dcgan_g_512to256", true, "mb4ic512ih8oc256oh16kh4sh2ph1", "DCGAN generator 4x4 s2 p1"},
        {"dcgan_g_256to128", true, "mb4ic256ih16oc128oh32kh4sh2ph1", "DCGAN generator 4x4 s2 p1"},
        {"dcgan_g_128to3", true, "mb32ic128ih32oc3oh64kh4sh2ph1", "DCGAN generator output layer"},
        {"unet_upconv_2x2s2", true, "mb1ic512ih32oc256oh64kh2sh2", "U-Net 2x2 up-convolution"},
        {"unet3d_upconv_2x2x2s2", true, "mb2ic128id16oc64od32kd2sd2", "3-D U-Net 2x2x2 up-convolution"},
        {"fcn_upscore2_x2", true, "mb32ic21ih16oc21oh34kh4sh2", "FCN-8s x2 upsampling (21 classes)"},
        {"fcn_upscore8_x8", true, "mb1ic21ih64oc21oh520kh16sh8", "FCN-8s x8 upsampling (21 classes)"},
        {"dw_upsample_4x4s2", true, "g64mb32ic64ih56oc64oh112kh4sh2ph1", "depthwise (bilinear) x2 upsampler"},
        {"hifigan_up1_k16s8", true, "mb8ic512iw32oc256ow256kw16sw8pw4", "HiFi-GAN V1 1-D transposed conv"},
        {"dcgan_g_proj_1x1in", true, "mb64ic100ih1oc512oh4kh4", "DCGAN generator projection nz=100 -> 512x4x4"},
        {"user_ct3d_50to1", true, "mb200ic50id1ih1iw1oc1od28oh28ow1kd28kh28kw1",
         "user's ConvTranspose3d 50 -> 1 channel, kernel 28x28x1 on a 1x1x1 input"},
        // Few channels on one side, kernels that are not the dense layers' (session 50).
        {"esrgan_conv_last_64to3", false, "mb16ic64ih128oc3oh128kh3ph1", "ESRGAN last conv, 64 -> RGB at 128x128"},
        {"hifigan_conv_post_32to1", false, "mb16ic32iw8192oc1ow8192kw7pw3", "HiFi-GAN conv_post 32 -> 1 (the waveform)"},
        {"wav2vec2_conv0_k10s5", false, "mb4ic1iw80000oc512ow15999kw10sw5pw0", "wav2vec2 feature encoder's first layer, 5 s of 16 kHz audio"},
    };
    return suite;
}

}  // namespace convgrad::tool
